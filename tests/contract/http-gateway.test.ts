import { createHttpGateway } from '../../src/dida/http-gateway';
import { startSimulator } from '../../src/sim/simulator';
import { runGatewayContract } from './gateway-contract';

runGatewayContract('HTTP client', async () => {
  const sim = await startSimulator();
  const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
  return {
    gateway,
    sim,
    reaches: { commentPaging: true, refusesRedirects: true },
    async cleanup() {
      await gateway.close();
      await sim.close();
    },
  };
});
